/**
 * Checks tool arguments against the JSON-schema subset tool parameters use: type (object, integer,
 * number, string, boolean, array, null, or a list of them), enum, const, properties, required,
 * additionalProperties (false or a schema), items, minimum/maximum and their exclusive forms,
 * minLength/maxLength, minItems/maxItems. Other keywords are not checked here: env.validate() is
 * the final judge of an action's legality.
 */
import type { JsonSchema } from '../core/messages.ts';

/** The first problem found, phrased for the model (`arguments.action must be one of "hit", "stick"`), or null. */
export function checkArguments(schema: JsonSchema, value: unknown, path = 'arguments'): string | null {
  const type = schema.type;
  if (type !== undefined) {
    const types = Array.isArray(type) ? (type as string[]) : [type as string];
    if (!types.some((t) => hasType(value, t))) return `${path} must be ${types.map(article).join(' or ')}, got ${describe(value)}`;
  }
  if (schema.const !== undefined && !sameJson(schema.const, value)) {
    return `${path} must be ${JSON.stringify(schema.const)}`;
  }
  if (Array.isArray(schema.enum) && !schema.enum.some((option) => sameJson(option, value))) {
    return `${path} must be one of ${schema.enum.map((o) => JSON.stringify(o)).join(', ')}, got ${describe(value)}`;
  }
  if (typeof value === 'number') return checkNumber(schema, value, path);
  if (typeof value === 'string') return checkString(schema, value, path);
  if (Array.isArray(value)) return checkArray(schema, value, path);
  if (isPlainObject(value)) return checkObject(schema, value, path);
  return null;
}

function checkNumber(schema: JsonSchema, value: number, path: string): string | null {
  const { minimum, maximum, exclusiveMinimum, exclusiveMaximum } = schema;
  if (typeof minimum === 'number' && value < minimum) return `${path} must be >= ${minimum}, got ${value}`;
  if (typeof maximum === 'number' && value > maximum) return `${path} must be <= ${maximum}, got ${value}`;
  if (typeof exclusiveMinimum === 'number' && value <= exclusiveMinimum) return `${path} must be > ${exclusiveMinimum}, got ${value}`;
  if (typeof exclusiveMaximum === 'number' && value >= exclusiveMaximum) return `${path} must be < ${exclusiveMaximum}, got ${value}`;
  return null;
}

function checkString(schema: JsonSchema, value: string, path: string): string | null {
  if (typeof schema.minLength === 'number' && value.length < schema.minLength) return `${path} must have at least ${schema.minLength} characters`;
  if (typeof schema.maxLength === 'number' && value.length > schema.maxLength) return `${path} must have at most ${schema.maxLength} characters`;
  return null;
}

function checkArray(schema: JsonSchema, value: unknown[], path: string): string | null {
  if (typeof schema.minItems === 'number' && value.length < schema.minItems) return `${path} must have at least ${schema.minItems} items`;
  if (typeof schema.maxItems === 'number' && value.length > schema.maxItems) return `${path} must have at most ${schema.maxItems} items`;
  if (isPlainObject(schema.items)) {
    for (let i = 0; i < value.length; i++) {
      const problem = checkArguments(schema.items, value[i], `${path}[${i}]`);
      if (problem) return problem;
    }
  }
  return null;
}

function checkObject(schema: JsonSchema, value: Record<string, unknown>, path: string): string | null {
  const properties = isPlainObject(schema.properties) ? (schema.properties as Record<string, JsonSchema>) : {};
  if (Array.isArray(schema.required)) {
    for (const key of schema.required as string[]) {
      if (!Object.hasOwn(value, key)) return `${path}.${key} is required`;
    }
  }
  const extra = schema.additionalProperties;
  for (const key in value) {
    const child = Object.hasOwn(properties, key) ? properties[key] : undefined;
    const childPath = `${path}.${key}`;
    if (isPlainObject(child)) {
      const problem = checkArguments(child, value[key], childPath);
      if (problem) return problem;
    } else if (extra === false) {
      const known = Object.keys(properties);
      return `${childPath} is not an argument of this tool${known.length ? ` (arguments: ${known.join(', ')})` : ' (it takes none)'}`;
    } else if (isPlainObject(extra)) {
      const problem = checkArguments(extra, value[key], childPath);
      if (problem) return problem;
    }
  }
  return null;
}

function hasType(value: unknown, type: string): boolean {
  switch (type) {
    case 'object':
      return isPlainObject(value);
    case 'array':
      return Array.isArray(value);
    case 'integer':
      return Number.isInteger(value);
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'string':
      return typeof value === 'string';
    case 'boolean':
      return typeof value === 'boolean';
    case 'null':
      return value === null;
    default:
      return true; // an unknown type name constrains nothing we can check
  }
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  return JSON.stringify(a) === JSON.stringify(b);
}

function article(type: string): string {
  return /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return `the string ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}...` : value)}`;
  if (typeof value === 'object') return 'an object';
  return `${typeof value === 'number' ? 'the number' : 'the value'} ${String(value)}`;
}
