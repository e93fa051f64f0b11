import type { GroupSpec } from '../verb.js';
import login from './login.js';
import logout from './logout.js';
import status from './status.js';
import switchProfile from './switch.js';
import token from './token.js';

export default {
  description: 'Log in with an API key, log out, show which key is used.',
  verbs: { login, logout, status, token, switch: switchProfile },
} satisfies GroupSpec;
