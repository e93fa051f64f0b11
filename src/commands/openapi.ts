import type { Context } from '../context.js';
import { buildOpenApiDocument } from '../contract/openapi.js';

/** `facectl openapi`: the OpenAPI 3.1 document, generated from src/contract. */
export async function runOpenApi(ctx: Context): Promise<void> {
  ctx.out.text(`${JSON.stringify(buildOpenApiDocument(), null, 2)}\n`);
}
