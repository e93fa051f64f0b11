import { type Face, getFace } from '../../contract/faces.js';
import { requireArgument } from '../../input/arguments.js';
import { type RequestContext, send } from '../kit.js';
import { FACE_FIELDS, showFaceWarnings } from './fields.js';

/** `facectl faces get <face_id>` (an extension endpoint of the local service). */
export async function getFaceAction(ctx: RequestContext, _raw: Record<string, unknown>, faceId: string): Promise<Face> {
  const face = await send(ctx, getFace, { params: { face_id: requireArgument('face_id', faceId) } });
  ctx.out.record(face, FACE_FIELDS);
  showFaceWarnings(ctx, face);
  return face;
}
