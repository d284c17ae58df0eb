import { toJsonSchema } from '@valibot/to-json-schema';
import type * as v from 'valibot';

/** A JSON Schema object as MCP tool input schemas carry it. */
export interface ObjectJsonSchema {
  type: 'object';
  properties: Record<string, Record<string, unknown>>;
  required: string[];
  additionalProperties?: boolean;
  [key: string]: unknown;
}

const convert = (schema: v.GenericSchema, typeMode: 'input' | 'output') =>
  toJsonSchema(schema, { errorMode: 'ignore', typeMode, target: 'draft-2020-12' }) as Record<string, unknown>;

/**
 * The properties of an object schema as a tool takes them. Query strings arrive as text, so a
 * property that is text on input and a number after parsing (e.g. `limit`) is offered as an
 * integer (a digit string still works), with the bounds of the parsed value.
 */
export function toolProperties(schema: v.GenericSchema): { properties: ObjectJsonSchema['properties']; required: string[] } {
  const input = convert(schema, 'input');
  const output = convert(schema, 'output');
  const inProps = (input.properties ?? {}) as ObjectJsonSchema['properties'];
  const outProps = (output.properties ?? {}) as ObjectJsonSchema['properties'];
  const properties: ObjectJsonSchema['properties'] = {};
  for (const [name, prop] of Object.entries(inProps)) {
    const parsed = outProps[name];
    if (prop.type === 'string' && parsed?.type === 'number') {
      const { pattern: _pattern, type: _type, default: fallback, ...rest } = prop;
      properties[name] = {
        ...rest,
        type: ['integer', 'string'],
        ...(parsed.minimum !== undefined ? { minimum: parsed.minimum } : {}),
        ...(parsed.maximum !== undefined ? { maximum: parsed.maximum } : {}),
        ...(fallback !== undefined ? { default: Number(fallback) } : {}),
      };
    } else {
      properties[name] = prop;
    }
  }
  return { properties, required: ((input.required ?? []) as string[]).filter((r) => r in properties) };
}

/** `{ ...pathParams (required strings), ...properties of each schema }` as one object schema. */
export function toolInputSchema(pathParams: readonly string[], schemas: readonly (v.GenericSchema | undefined)[], descriptions: Record<string, string> = {}): ObjectJsonSchema {
  const properties: ObjectJsonSchema['properties'] = {};
  const required = new Set<string>();
  for (const name of pathParams) {
    properties[name] = { type: 'string', minLength: 1, ...(descriptions[name] ? { description: descriptions[name] } : {}) };
    required.add(name);
  }
  for (const schema of schemas) {
    if (!schema) continue;
    const part = toolProperties(schema);
    for (const [name, prop] of Object.entries(part.properties)) if (!(name in properties)) properties[name] = prop;
    for (const name of part.required) required.add(name);
  }
  return { type: 'object', properties, required: [...required] };
}
