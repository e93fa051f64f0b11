import { UsageError } from '../errors.js';
import { describeJsonValue, isPlainObject } from './json.js';
import { problemsMessage } from './source.js';

/** `threads replace-messages`' list, each element checked before sending, problems named as `messages[3].from`. */

export type ThreadMessage = { role: string; content: string; from: string };

const FIELDS = ['role', 'content', 'from'] as const;
const RENAMED = ' (responses call it "name"; send it as "from")';

/** convert: the hint's command converting the input with a jq filter, for a list copied from a thread response. */
export function validateMessageList(
  value: unknown,
  sourceName: string,
  convert: (filter: string) => string,
): ThreadMessage[] {
  const fromThread = () =>
    convert(`${Array.isArray(value) ? '' : '.messages | '}map({role, content, from: (.from // .name)})`);
  let list: unknown = value;
  if (!Array.isArray(value)) {
    if (!isPlainObject(value) || !('messages' in value)) {
      const found = isPlainObject(value) ? 'an object without "messages"' : describeJsonValue(value);
      throw invalid(sourceName, [`expected an array of messages or an object {"messages": [...]}, found ${found}`]);
    }
    const extra = Object.keys(value).find((key) => key !== 'messages');
    if (extra !== undefined) {
      const whole = 'thread_id' in value ? fromThread() : undefined;
      throw invalid(sourceName, [`unknown field ${JSON.stringify(extra)} beside "messages"`], whole);
    }
    list = value.messages;
    if (!Array.isArray(list))
      throw invalid(sourceName, [`messages: expected an array, found ${describeJsonValue(list)}`]);
  }

  const problems: string[] = [];
  const messages: ThreadMessage[] = [];
  (list as unknown[]).forEach((element, index) => {
    const at = `messages[${index}]`;
    if (!isPlainObject(element)) {
      problems.push(`${at}: expected an object {role, content, from}, found ${describeJsonValue(element)}`);
      return;
    }
    for (const field of FIELDS) {
      const fieldValue = element[field];
      if (fieldValue === undefined) {
        // A list copied from a thread response spells the speaker `name`; say how to send it.
        const renamed = field === 'from' && typeof element.name === 'string' ? RENAMED : '';
        problems.push(`${at}.${field}: required${renamed}`);
      } else if (typeof fieldValue !== 'string') {
        problems.push(`${at}.${field}: must be a string, found ${describeJsonValue(fieldValue)}`);
      } else if (field === 'role' && fieldValue.length === 0) {
        problems.push(`${at}.role: must not be empty`);
      }
    }
    for (const key of Object.keys(element)) {
      if (!(FIELDS as readonly string[]).includes(key) && !(key === 'name' && element.from === undefined)) {
        problems.push(`${at}: unknown field ${JSON.stringify(key)} (a message has role, content and from)`);
      }
    }
    messages.push({ role: element.role as string, content: element.content as string, from: element.from as string });
  });
  const renamed = problems.some((problem) => problem.endsWith(RENAMED));
  if (problems.length > 0) throw invalid(sourceName, problems, renamed ? fromThread() : undefined);
  return messages;
}

/** conversion: the input is (part of) a `threads get` answer; the hint gives the conversion of this input. */
function invalid(sourceName: string, problems: string[], conversion?: string): UsageError {
  const counted = `${problems.length} problems in the message list`;
  return new UsageError(problemsMessage(sourceName, problems, problems.length, counted), {
    code: 'invalid_input',
    hint: 'each message is {"role": ..., "content": ..., "from": ...}' + (conversion ? `; ${conversion}` : ''),
  });
}
