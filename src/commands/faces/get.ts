import type { Context } from '../../context.js';
import { type Face, getFace } from '../../contract/faces.js';
import { requireArgument } from '../../input/arguments.js';
import { FACE_FIELDS, showFaceWarnings } from './fields.js';

/** `facectl faces get <face_id>` (an extension endpoint of the local service). */

export async function getFaceAction(ctx: Context, _raw: Record<string, unknown>, faceId: string): Promise<void> {
  await runGetFace(ctx, { faceId: requireArgument('face_id', faceId) });
}

export async function runGetFace(ctx: Context, opts: { faceId: string }): Promise<Face> {
  const api = await ctx.api();
  const face = await api.call(getFace, { params: { face_id: opts.faceId } }, { signal: ctx.signal });
  ctx.out.record(face, FACE_FIELDS);
  showFaceWarnings(ctx, face);
  return face;
}
