import * as v from 'valibot';

const Email = v.pipe(v.string('email is required'), v.trim(), v.toLowerCase(), v.email('email must be a valid address'), v.maxLength(254));

export const LoginBody = v.object({
  email: v.pipe(v.string('email and password are required'), v.trim(), v.minLength(1, 'email and password are required')),
  password: v.pipe(v.string('email and password are required'), v.minLength(1, 'email and password are required')),
}, 'email and password are required');
export const LoginResult = v.object({ token: v.string(), expiresAt: v.string() });
export const OkResult = v.object({ ok: v.boolean() });

export const Profile = v.object({ id: v.string(), email: v.string(), name: v.string(), createdAt: v.string() });

export const UpdateProfileBody = v.pipe(
  v.strictObject(
    {
      name: v.optional(v.pipe(v.string(), v.trim(), v.maxLength(80, 'name must be at most 80 characters'))),
      email: v.optional(Email),
      password: v.optional(v.pipe(v.string(), v.minLength(8, 'password must be at least 8 characters'), v.maxLength(200))),
      currentPassword: v.optional(v.string()),
    },
    'Unknown field: profile accepts name, email, password and currentPassword',
  ),
  v.check((b) => b.name !== undefined || b.email !== undefined || b.password !== undefined, 'No valid fields to update'),
);

export const ApiKeyItem = v.object({
  id: v.string(),
  name: v.string(),
  scope: v.picklist(['read', 'write']),
  prefix: v.string(),
  last4: v.string(),
  createdAt: v.string(),
  lastUsedAt: v.nullable(v.string()),
});
export const ApiKeyList = v.object({ keys: v.array(ApiKeyItem) });
export const CreateKeyBody = v.object({
  scope: v.picklist(['read', 'write'], 'scope must be read or write'),
  name: v.optional(v.pipe(v.string(), v.trim(), v.maxLength(80, 'name must be at most 80 characters')), ''),
}, 'scope must be read or write');
export const CreatedKey = v.object({ ...ApiKeyItem.entries, key: v.string() });
export const DeleteKeyBody = v.object({ id: v.pipe(v.string('id is required'), v.minLength(1, 'id is required')) }, 'id is required');
export const ConfirmBody = v.object({ confirm: v.literal(true, 'Pass `confirm` true') }, 'Pass `confirm` true');
/** Body of `DELETE /api/account`: `confirm` as for projects, plus the password again (a borrowed session is not enough). */
export const DeleteAccountBody = v.object(
  {
    confirm: v.literal(true, 'Pass `confirm` true'),
    password: v.optional(v.pipe(v.string('password must be a string'), v.maxLength(200, 'password must be at most 200 characters'))),
  },
  'Pass `confirm` true',
);
