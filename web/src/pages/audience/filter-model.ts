// The segment filter builder's model: a tree of groups (all / any, each maybe negated) and conditions, made from
// and turned into the api's filter language (docs: POST /segments). Each node knows the path the api names it by
// (`filter.all.1.value`), so a refusal is shown beside the node it is about.

export type PropertyType = 'string' | 'number' | 'boolean';

export interface Condition {
  kind: 'condition';
  uid: number;
  not: boolean;
  field: string;
  operator: string;
  key: string;
  topic_id: string;
  value: string;
  days: string;
}

export interface Group {
  kind: 'group';
  uid: number;
  not: boolean;
  join: 'all' | 'any';
  children: Node[];
}

export type Node = Condition | Group;

export const FIELDS: [string, string][] = [
  ['email', 'Address'],
  ['first_name', 'First name'],
  ['last_name', 'Last name'],
  ['property', 'Property'],
  ['topic', 'Topic'],
  ['created_at', 'Added'],
  ['unsubscribed', 'Unsubscribed'],
  ['received', 'Received mail'],
  ['opened', 'Opened mail'],
  ['clicked', 'Clicked a link'],
];

const TEXT = ['equals', 'not_equals', 'contains', 'starts_with', 'ends_with'];
const SET = ['is_set', 'is_not_set'];
const NUMBER = ['equals', 'not_equals', 'greater_than', 'greater_than_or_equal', 'less_than', 'less_than_or_equal'];
const DAYS = ['within_last_days', 'not_within_last_days'];

/** The operators a field takes (a property's: by its type). */
export function operatorsFor(field: string, type: PropertyType | undefined): string[] {
  switch (field) {
    case 'email':
      return TEXT;
    case 'first_name':
    case 'last_name':
      return [...TEXT, ...SET];
    case 'property':
      return type === 'number'
        ? [...NUMBER, ...SET]
        : type === 'boolean'
          ? ['equals', 'not_equals', ...SET]
          : [...TEXT, ...SET];
    case 'topic':
      return ['subscribed', 'not_subscribed'];
    case 'created_at':
      return ['before', 'after', 'within_last_days'];
    case 'unsubscribed':
      return ['equals'];
    default:
      return DAYS;
  }
}

export const needsDays = (c: Condition) => c.operator === 'within_last_days' || c.operator === 'not_within_last_days';
export const needsValue = (c: Condition) => !needsDays(c) && !SET.includes(c.operator) && c.field !== 'topic';

let next = 1;
const uid = () => next++;

export function newCondition(): Condition {
  return {
    kind: 'condition',
    uid: uid(),
    not: false,
    field: 'email',
    operator: 'contains',
    key: '',
    topic_id: '',
    value: '',
    days: '',
  };
}

export function newGroup(join: 'all' | 'any' = 'all', children: Node[] = []): Group {
  return { kind: 'group', uid: uid(), not: false, join, children };
}

type Json = Record<string, unknown>;

/** The builder's tree of an api filter (a condition alone becomes a group of one). */
export function fromFilter(filter: unknown): Group {
  if (!filter) return newGroup();
  const node = parse(filter as Json, false);
  return node.kind === 'group' ? node : newGroup('all', [node]);
}

function parse(f: Json, not: boolean): Node {
  if ('not' in f) return parse(f.not as Json, !not);
  if ('all' in f || 'any' in f) {
    const join = 'all' in f ? 'all' : 'any';
    return {
      ...newGroup(
        join,
        (f[join] as Json[]).map((c) => parse(c, false)),
      ),
      not,
    };
  }
  const str = (v: unknown) => (v === undefined || v === null ? '' : String(v));
  return {
    ...newCondition(),
    not,
    field: str(f.field),
    operator: str(f.operator),
    key: str(f.key),
    topic_id: str(f.topic_id),
    value: f.field === 'created_at' && typeof f.value === 'string' ? toLocalInput(f.value) : str(f.value),
    days: str(f.days),
  };
}

/** An ISO instant as a datetime-local input's value (the browser's timezone). */
function toLocalInput(iso: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  const local = new Date(d.getTime() - d.getTimezoneOffset() * 60_000);
  return local.toISOString().slice(0, 16);
}

/** A condition's value as the language wants it: typed by the field (a property: by its type). */
function typedValue(c: Condition, type: PropertyType | undefined): unknown {
  const isNumber = c.field === 'property' && type === 'number';
  const isBoolean = c.field === 'unsubscribed' || (c.field === 'property' && type === 'boolean');
  if (isBoolean) return c.value === 'true' ? true : c.value === 'false' ? false : c.value;
  // Not a number: sent as it is, for the api to refuse at its path.
  if (isNumber) return c.value.trim() !== '' && Number.isFinite(Number(c.value)) ? Number(c.value) : c.value;
  if (c.field === 'created_at') {
    const d = new Date(c.value);
    return Number.isNaN(d.getTime()) ? c.value : d.toISOString();
  }
  return c.value;
}

/** The api's filter of a builder tree: null for an empty root group (members added by hand only). */
export function toFilter(root: Group, types: Map<string, PropertyType>): Json | null {
  if (root.children.length === 0 && !root.not) return null;
  return serialize(root, types);
}

function serialize(n: Node, types: Map<string, PropertyType>): Json {
  let out: Json;
  if (n.kind === 'group') out = { [n.join]: n.children.map((c) => serialize(c, types)) };
  else {
    out = { field: n.field, operator: n.operator };
    if (n.field === 'property') out.key = n.key;
    if (n.field === 'topic') out.topic_id = n.topic_id;
    if (needsDays(n)) out.days = /^\d+$/.test(n.days) ? Number(n.days) : n.days;
    if (needsValue(n)) out.value = typedValue(n, types.get(n.key));
  }
  return n.not ? { not: out } : out;
}

/** The path the api names a node by: `filter`, `filter.all.2`, `filter.any.0.not`. */
export function childPath(parentPath: string, parent: Group, index: number): string {
  const inner = parent.not ? `${parentPath}.not` : parentPath;
  return `${inner}.${parent.join}.${index}`;
}

/** Where a node's own fields are named: inside its `not` when negated. */
export const innerPath = (path: string, n: Node) => (n.not ? `${path}.not` : path);
