// cli-table3, its own word wrap and width, loaded together (one chunk of the build) when a table is drawn.
import Table from 'cli-table3';
import utils from 'cli-table3/src/utils.js';

export { Table };
export const wrap = utils.wordWrap;
/** The columns a text takes on a terminal (string-width: a CJK character two, an emoji sequence two, escapes none). */
export const width = utils.strlen;
