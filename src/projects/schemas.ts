import * as v from 'valibot';
import { Messages } from '../errors.js';
import { canonicalTimeZone } from './timezone.js';

const DateTime = v.pipe(v.string(), v.isoTimestamp());
const RoleSchema = v.picklist(['owner', 'admin', 'member']);

export const ProjectListItem = v.object({
  id: v.string(),
  name: v.string(),
  domain: v.string(),
  timeZone: v.string(),
  createdAt: DateTime,
  accessRole: RoleSchema,
  icon: v.nullable(v.string()),
});

export const ProjectList = v.object({ projects: v.array(ProjectListItem) });

export const ProjectDetail = v.object({
  id: v.string(),
  name: v.string(),
  domain: v.string(),
  timeZone: v.string(),
  publicStatsEnabled: v.boolean(),
  brandColor: v.nullable(v.string()),
  icon: v.nullable(v.string()),
  installationSeenAt: v.nullable(DateTime),
  createdAt: DateTime,
  isOwner: v.boolean(),
});

export const ProjectUpdated = v.object({
  id: v.string(),
  name: v.string(),
  domain: v.string(),
  timeZone: v.string(),
  publicStatsEnabled: v.boolean(),
  installationSeenAt: v.nullable(DateTime),
});

export const InstallVerified = v.object({
  verified: v.boolean(),
  installationSeenAt: v.nullable(DateTime),
});

export const DeleteResult = v.object({ ok: v.boolean() });

const TimeZone = (message: string) =>
  v.pipe(
    v.string(message),
    v.check((z) => canonicalTimeZone(z) !== null, message),
    v.transform((z) => canonicalTimeZone(z) as string),
  );

const Name = (message: string) => v.pipe(v.string(message), v.trim(), v.minLength(1, message), v.maxLength(80, message));

export const CreateProjectBody = v.object({
  name: v.pipe(
    v.string(Messages.nameDomainRequired),
    v.trim(),
    v.minLength(1, Messages.nameDomainRequired),
    v.maxLength(80, 'name must be at most 80 characters'),
  ),
  domain: v.pipe(v.string(Messages.nameDomainRequired), v.trim(), v.minLength(1, Messages.nameDomainRequired)),
  timeZone: v.optional(TimeZone('timeZone must be a valid IANA time zone, e.g. Europe/Berlin'), 'UTC'),
  // A missing key or a body that is not an object reports the object's message, not valibot's.
}, Messages.nameDomainRequired);

/** Every field PATCH accepts; an unknown field or any invalid value refuses the whole body. */
export const UpdateProjectBody = v.pipe(
  v.strictObject(
    {
      name: v.optional(Name(Messages.noValidFields)),
      timeZone: v.optional(TimeZone(Messages.noValidFields)),
      publicStatsEnabled: v.optional(v.boolean(Messages.noValidFields)),
      // null clears the value (the second argument of v.nullable would be a default, not a message).
      brandColor: v.optional(v.nullable(v.pipe(v.string(), v.regex(/^#[0-9a-fA-F]{6}$/)))),
      icon: v.optional(v.nullable(v.pipe(v.string(), v.maxLength(2048), v.url(), v.startsWith('https://')))),
    },
    Messages.noValidFields,
  ),
  v.check((body) => Object.keys(body).length > 0, Messages.noValidFields),
);

export const DeleteProjectBody = v.object({ confirm: v.literal(true, Messages.confirmRequired) }, Messages.confirmRequired);
