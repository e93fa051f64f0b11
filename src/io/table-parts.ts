// cli-table3 and its own word wrap, loaded together (one chunk of the build) when a table is drawn.
import Table from 'cli-table3';
import utils from 'cli-table3/src/utils.js';

export { Table };
export const wrap = utils.wordWrap;
