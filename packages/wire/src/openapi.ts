import { z } from 'zod';
import { components } from './registry.js';

type JsonSchema = Record<string, unknown>;

/**
 * The OpenAPI 3.1 `components.schemas` of every registered wire type, generated from the zod
 * schemas (JSON Schema draft 2020-12, as OpenAPI 3.1 uses): references between them are
 * `#/components/schemas/<id>`. Request schemas are described as accepted (`io: 'input'`), so
 * objects stay open: the platform ignores unknown request members and may add response members.
 */
export function openApiComponents(): Record<string, JsonSchema> {
  const { schemas } = z.toJSONSchema(components, {
    target: 'draft-2020-12',
    io: 'input',
    uri: (id) => `#/components/schemas/${id}`,
    override: ({ jsonSchema }) => {
      // z.int() says "a safe integer"; every integer on this wire is one, so the bounds are noise.
      if (jsonSchema.minimum === Number.MIN_SAFE_INTEGER) delete jsonSchema.minimum;
      if (jsonSchema.maximum === Number.MAX_SAFE_INTEGER) delete jsonSchema.maximum;
    },
  });
  return Object.fromEntries(
    Object.entries(schemas).map(([id, schema]) => {
      const { $schema: _schema, $id: _id, ...rest } = schema as JsonSchema;
      return [id, rest];
    }),
  );
}
