import { verb } from './kit.js';

/** `facectl openapi`: the OpenAPI 3.1 document, generated from src/contract. */
export default verb({
  description: 'Print the OpenAPI 3.1 document generated from the interface contract.',
  examples: ['facectl openapi > openapi.json', 'facectl openapi | jq ".paths | keys"'],
  async run(ctx) {
    const { buildOpenApiDocument } = await import('../contract/openapi.js');
    ctx.out.text(`${JSON.stringify(buildOpenApiDocument(), null, 2)}\n`);
  },
});
