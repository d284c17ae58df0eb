import { toJsonSchema } from '@valibot/to-json-schema';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CreateProjectBody, UpdateProjectBody } from '../../src/projects/schemas.js';
import { closeHarness, createHarness, type Harness } from '../helpers/harness.js';

/** /openapi.json covers every foundation route, generated from the validating valibot schemas. */
let h: Harness;
let doc: {
  openapi: string;
  info: { version: string };
  paths: Record<string, Record<string, Operation>>;
  components: { securitySchemes: Record<string, { type: string; scheme?: string }> };
};
interface Operation {
  security?: Record<string, string[]>[];
  parameters?: { in: string; name: string; required?: boolean }[];
  requestBody?: { content: { 'application/json': { schema: JsonSchema } } };
  responses: Record<string, { content?: { 'application/json'?: { schema: JsonSchema } } }>;
}
type JsonSchema = { type?: string; properties?: Record<string, unknown>; required?: string[]; additionalProperties?: boolean };

beforeAll(async () => {
  h = await createHarness();
  const res = await h.call('GET', '/openapi.json');
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/application\/json/);
  doc = await res.json();
});
afterAll(closeHarness);

/** The foundation's routes and the statuses each must document. */
const FOUNDATION: [path: string, method: string, statuses: string[]][] = [
  ['/api/v1/projects', 'get', ['200', '401', '429']],
  ['/api/v1/projects', 'post', ['201', '400', '401', '403', '429']],
  ['/api/v1/projects/{domain}', 'get', ['200', '401', '404', '429']],
  ['/api/v1/projects/{domain}', 'patch', ['200', '400', '401', '403', '404', '429']],
  ['/api/v1/projects/{domain}', 'delete', ['200', '400', '401', '403', '404']],
  ['/api/v1/projects/{domain}/install/verify', 'post', ['200', '401', '403', '404', '429']],
  ['/api/auth/login', 'post', ['200', '400', '401']],
  ['/api/auth/logout', 'post', ['200', '401']],
  ['/api/account/profile', 'get', ['200', '401']],
  ['/api/account/profile', 'patch', ['200', '400', '401']],
  ['/api/account/keys', 'get', ['200', '401']],
  ['/api/account/keys', 'post', ['201', '400', '401']],
  ['/api/account/keys', 'delete', ['200', '400', '401', '404']],
  ['/api/account', 'delete', ['200', '400', '401', '403', '429']],
];

describe('/openapi.json', () => {
  it('is OpenAPI 3.1.0, description version 1.0.0, with bearer security schemes', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.version).toBe('1.0.0');
    expect(doc.components.securitySchemes.bearerApiKey).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(doc.components.securitySchemes.session).toMatchObject({ type: 'http', scheme: 'bearer' });
  });

  it('writes path parameters as {domain}, never as :domain', () => {
    for (const path of Object.keys(doc.paths)) expect(path).not.toMatch(/:/);
  });

  it.each(FOUNDATION)('%s %s is documented with its statuses', (path, method, statuses) => {
    const op = doc.paths[path]?.[method];
    expect(op, `${method} ${path}`).toBeDefined();
    expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(statuses));
    for (const status of statuses.filter((s) => Number(s) >= 400)) {
      expect(op.responses[status].content?.['application/json']?.schema).toMatchObject({
        type: 'object',
        properties: { error: { type: 'string' } },
        required: ['error'],
      });
    }
    if (path.includes('{domain}')) {
      expect(op.parameters).toEqual(expect.arrayContaining([expect.objectContaining({ in: 'path', name: 'domain', required: true })]));
    }
  });

  it('/api/v1 routes accept an API key or a session; account routes a session only', () => {
    for (const [path, method] of FOUNDATION) {
      const security = doc.paths[path][method].security ?? [];
      const schemes = security.flatMap((s) => Object.keys(s));
      if (path.startsWith('/api/v1')) expect(schemes, `${method} ${path}`).toEqual(expect.arrayContaining(['bearerApiKey', 'session']));
      if (path.startsWith('/api/account') || path === '/api/auth/logout') expect(schemes, `${method} ${path}`).toEqual(['session']);
    }
  });

  it('request bodies come from the same valibot schemas that validate the requests', () => {
    const strip = ({ $schema: _s, ...rest }: Record<string, unknown>) => rest;
    const create = doc.paths['/api/v1/projects'].post.requestBody!.content['application/json'].schema;
    expect(create).toEqual(strip(toJsonSchema(CreateProjectBody, { errorMode: 'ignore' }) as Record<string, unknown>));
    expect(create.required).toEqual(['name', 'domain']);
    expect(create.properties).toMatchObject({ name: { maxLength: 80 } });

    const update = doc.paths['/api/v1/projects/{domain}'].patch.requestBody!.content['application/json'].schema;
    expect(update).toEqual(strip(toJsonSchema(UpdateProjectBody, { errorMode: 'ignore' }) as Record<string, unknown>));
    expect(Object.keys(update.properties ?? {}).sort()).toEqual(['brandColor', 'icon', 'name', 'publicStatsEnabled', 'timeZone']);
    expect(update.additionalProperties).toBe(false);
  });

  it('response schemas carry the contract fields (§2.1, §2.2, §4.2)', () => {
    const schemaOf = (path: string, method: string, status: string) =>
      doc.paths[path][method].responses[status].content!['application/json']!.schema;
    const list = schemaOf('/api/v1/projects', 'get', '200') as { properties: { projects: { items: JsonSchema } } };
    expect(Object.keys(list.properties.projects.items.properties ?? {}).sort()).toEqual(
      ['accessRole', 'createdAt', 'domain', 'icon', 'id', 'name', 'timeZone'],
    );
    expect(Object.keys(schemaOf('/api/v1/projects/{domain}', 'get', '200').properties ?? {}).sort()).toEqual(
      ['brandColor', 'createdAt', 'domain', 'icon', 'id', 'installationSeenAt', 'isOwner', 'name', 'publicStatsEnabled', 'timeZone'],
    );
    expect(Object.keys(schemaOf('/api/v1/projects/{domain}', 'patch', '200').properties ?? {}).sort()).toEqual(
      ['domain', 'id', 'installationSeenAt', 'name', 'publicStatsEnabled', 'timeZone'],
    );
    expect(Object.keys(schemaOf('/api/v1/projects/{domain}/install/verify', 'post', '200').properties ?? {}).sort()).toEqual(
      ['installationSeenAt', 'verified'],
    );
  });

  it('is served the same on every call and needs no credential', async () => {
    const again = await (await h.call('GET', '/openapi.json')).json();
    expect(again).toEqual(doc);
  });
});
