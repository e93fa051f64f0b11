import { requireArgument, send, verb, withExtensionNote } from '../kit.js';
import { FACE_FIELDS, showFaceWarnings } from './fields.js';

/** `facectl faces get <face_id>` (an extension endpoint of the local service). */
export default verb({
  description: withExtensionNote('Show a face, by uid or alias.'),
  args: [['<face_id>', 'the face uid (face_...) or its alias']],
  examples: ['facectl faces get ada-lovelace', 'facectl faces get face_3x9Qk2 --json | jq .component_counts'],
  async run(ctx, _flags, faceId) {
    const { getFace } = await import('../../contract/faces.js');
    const face = await send(ctx, getFace, { params: { face_id: requireArgument('face_id', faceId) } });
    ctx.out.record(face, FACE_FIELDS);
    showFaceWarnings(ctx, face);
    return face;
  },
});
