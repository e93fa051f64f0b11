import type { Lenient } from '../../api/answers.js';
import type { Column, Context } from '../../context.js';
import type { Face } from '../../contract/faces.js';
import { fieldColumns, requireArgument, send, verb, withExtensionNote } from '../kit.js';

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

type FaceAnswer = Lenient<Face>;

/** `created` as a date: Unix seconds (the seed leaves the unit unsaid), milliseconds past the year 5000, or as is. */
function createdAsDate(created: number | null | undefined): string | number | null {
  if (created === null || created === undefined) return null;
  const ms = Math.abs(created) >= 1e11 ? created : created * 1000;
  const date = new Date(ms);
  return Number.isNaN(date.getTime()) ? created : date.toISOString();
}

/** The service's `warnings` on a face, each on stderr: a face may be created and still need a look. */
export function showFaceWarnings(ctx: Pick<Context, 'out'>, face: FaceAnswer): void {
  for (const warning of face.warnings ?? []) if (warning) ctx.out.warn(`the service says: ${warning}`);
}

export const FACE_FIELDS: Column<FaceAnswer>[] = [
  ...fieldColumns<FaceAnswer>('uid', 'alias', 'name', 'owned_by'),
  { header: 'created', value: (f) => createdAsDate(f.created) },
  ...fieldColumns<FaceAnswer>('default_model', 'default_tools', 'formula'),
  ...fieldColumns<FaceAnswer>('basic_facts', 'component_counts', 'profile_token_count'),
  { header: 'warnings', value: (f) => (f.warnings && f.warnings.length > 0 ? f.warnings : null) },
];
