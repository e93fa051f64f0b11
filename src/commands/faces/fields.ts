import type { Column } from '../../context.js';
import type { Face } from '../../contract/faces.js';

/** The face fields shown on a terminal or as tab-separated lines; --json prints the whole object. */
export const FACE_FIELDS: Column<Face>[] = [
  { header: 'uid', value: (f) => f.uid },
  { header: 'alias', value: (f) => f.alias },
  { header: 'name', value: (f) => f.name },
  { header: 'owned_by', value: (f) => f.owned_by },
  { header: 'created', value: (f) => new Date(f.created * 1000).toISOString() },
  { header: 'default_model', value: (f) => f.default_model },
  { header: 'default_tools', value: (f) => f.default_tools },
  { header: 'formula', value: (f) => f.formula },
  { header: 'basic_facts', value: (f) => f.basic_facts },
  { header: 'component_counts', value: (f) => f.component_counts },
  { header: 'profile_token_count', value: (f) => f.profile_token_count },
];
