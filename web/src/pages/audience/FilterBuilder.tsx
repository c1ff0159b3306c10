// The segment filter builder: groups (all / any, each can be negated) of conditions and groups, each condition's
// inputs as its field and operator need. A refusal of the api is shown beside the node its path names.
import type { ApiError, Schemas } from '../../api/client';
import {
  childPath,
  FIELDS,
  innerPath,
  needsDays,
  needsValue,
  newCondition,
  newGroup,
  operatorsFor,
  type Condition,
  type Group,
  type Node,
  type PropertyType,
} from './filter-model';

export interface Choices {
  properties: Schemas['ContactPropertyListItem'][];
  topics: Schemas['TopicListItem'][];
}

interface Props {
  node: Node;
  path: string;
  choices: Choices;
  errors: NonNullable<ApiError['errors']>;
  readOnly: boolean;
  onChange: (n: Node) => void;
  onRemove?: () => void;
}

const OPERATOR_LABELS: Record<string, string> = {
  greater_than: '>',
  greater_than_or_equal: '≥',
  less_than: '<',
  less_than_or_equal: '≤',
};
const label = (op: string) => OPERATOR_LABELS[op] ?? op.replaceAll('_', ' ');

function ownErrors(errors: Props['errors'], n: Node, path: string) {
  const inner = innerPath(path, n);
  return errors.filter((e) =>
    n.kind === 'group'
      ? e.path === path || e.path === inner || e.path === `${inner}.${n.join}`
      : e.path === path || e.path === inner || e.path.startsWith(`${inner}.`),
  );
}

function NodeErrors({ list }: { list: Props['errors'] }) {
  if (list.length === 0) return null;
  return (
    <div className="node-errors" role="alert">
      <ul>
        {list.map((e, i) => (
          <li key={i}>
            <code>{e.path}</code>: {e.message}
          </li>
        ))}
      </ul>
    </div>
  );
}

export function FilterNode(props: Props) {
  return props.node.kind === 'group' ? (
    <GroupBox {...props} node={props.node} />
  ) : (
    <ConditionRow {...props} node={props.node} />
  );
}

function GroupBox(props: Props & { node: Group }) {
  const { node, path, readOnly, onChange } = props;
  const set = (change: Partial<Group>) => onChange({ ...node, ...change });
  const replace = (i: number, n: Node) => set({ children: node.children.map((c, j) => (j === i ? n : c)) });
  const remove = (i: number) => set({ children: node.children.filter((_, j) => j !== i) });
  return (
    <fieldset className={`group ${node.not ? 'negated' : ''}`} data-path={path}>
      <legend>
        <label>
          <span className="visually-hidden">Group at {path}: match</span>
          <select
            value={node.join}
            disabled={readOnly}
            onChange={(e) => set({ join: e.target.value as 'all' | 'any' })}
          >
            <option value="all">All of these</option>
            <option value="any">Any of these</option>
          </select>
        </label>
        <label className="check">
          <input
            type="checkbox"
            checked={node.not}
            disabled={readOnly}
            onChange={(e) => set({ not: e.target.checked })}
          />
          <span>Not</span>
        </label>
        {props.onRemove && !readOnly ? (
          <button
            type="button"
            className="small danger"
            onClick={props.onRemove}
            aria-label={`Remove group at ${path}`}
          >
            Remove group
          </button>
        ) : null}
      </legend>
      <NodeErrors list={ownErrors(props.errors, node, path)} />
      {node.children.length === 0 ? <p className="hint">No conditions: every member is added by hand.</p> : null}
      {node.children.map((c, i) => (
        <FilterNode
          key={c.uid}
          {...props}
          node={c}
          path={childPath(path, node, i)}
          onChange={(n) => replace(i, n)}
          onRemove={() => remove(i)}
        />
      ))}
      {readOnly ? null : (
        <div className="actions">
          <button type="button" className="small" onClick={() => set({ children: [...node.children, newCondition()] })}>
            Add condition
          </button>
          <button
            type="button"
            className="small"
            onClick={() => set({ children: [...node.children, newGroup('any', [newCondition()])] })}
          >
            Add group
          </button>
        </div>
      )}
    </fieldset>
  );
}

function ConditionRow(props: Props & { node: Condition }) {
  const { node: c, path, choices, readOnly, onChange } = props;
  const type = choices.properties.find((p) => p.key === c.key)?.type as PropertyType | undefined;
  const set = (change: Partial<Condition>) => {
    const n = { ...c, ...change };
    const ops = operatorsFor(n.field, choices.properties.find((p) => p.key === n.key)?.type as PropertyType);
    if (!ops.includes(n.operator)) n.operator = ops[0];
    onChange(n);
  };
  const name = (what: string) => `${what} of the condition at ${path}`;
  return (
    <div className={`condition ${c.not ? 'negated' : ''}`} data-path={path}>
      <div className="condition-inputs">
        <label className="check">
          <input type="checkbox" checked={c.not} disabled={readOnly} onChange={(e) => set({ not: e.target.checked })} />
          <span>Not</span>
        </label>
        <select
          aria-label={name('Field')}
          value={c.field}
          disabled={readOnly}
          onChange={(e) => set({ field: e.target.value })}
        >
          {FIELDS.map(([v, l]) => (
            <option key={v} value={v}>
              {l}
            </option>
          ))}
        </select>
        {c.field === 'property' ? (
          <select
            aria-label={name('Property')}
            value={c.key}
            disabled={readOnly}
            onChange={(e) => set({ key: e.target.value })}
          >
            <option value="">(choose)</option>
            {choices.properties.map((p) => (
              <option key={p.id} value={p.key}>
                {p.key}
              </option>
            ))}
          </select>
        ) : null}
        {c.field === 'topic' ? (
          <select
            aria-label={name('Topic')}
            value={c.topic_id}
            disabled={readOnly}
            onChange={(e) => set({ topic_id: e.target.value })}
          >
            <option value="">(choose)</option>
            {choices.topics.map((t) => (
              <option key={t.id} value={t.id}>
                {t.name}
              </option>
            ))}
          </select>
        ) : null}
        <select
          aria-label={name('Operator')}
          value={c.operator}
          disabled={readOnly}
          onChange={(e) => set({ operator: e.target.value })}
        >
          {operatorsFor(c.field, type).map((o) => (
            <option key={o} value={o}>
              {label(o)}
            </option>
          ))}
        </select>
        <ValueInput c={c} type={type} name={name} readOnly={readOnly} set={set} />
        {props.onRemove && !readOnly ? (
          <button
            type="button"
            className="small danger"
            onClick={props.onRemove}
            aria-label={`Remove condition at ${path}`}
          >
            Remove
          </button>
        ) : null}
      </div>
      <NodeErrors list={ownErrors(props.errors, c, path)} />
    </div>
  );
}

function ValueInput(props: {
  c: Condition;
  type: PropertyType | undefined;
  name: (what: string) => string;
  readOnly: boolean;
  set: (change: Partial<Condition>) => void;
}) {
  const { c, type, name, readOnly, set } = props;
  if (needsDays(c))
    return (
      <label className="days">
        <input
          aria-label={name('Days')}
          inputMode="numeric"
          value={c.days}
          disabled={readOnly}
          onChange={(e) => set({ days: e.target.value })}
        />
        <span>days</span>
      </label>
    );
  if (!needsValue(c)) return null;
  if (c.field === 'unsubscribed' || (c.field === 'property' && type === 'boolean'))
    return (
      <select
        aria-label={name('Value')}
        value={c.value}
        disabled={readOnly}
        onChange={(e) => set({ value: e.target.value })}
      >
        <option value="">(choose)</option>
        <option value="true">true</option>
        <option value="false">false</option>
      </select>
    );
  return (
    <input
      aria-label={name('Value')}
      type={c.field === 'created_at' ? 'datetime-local' : 'text'}
      inputMode={type === 'number' ? 'decimal' : undefined}
      value={c.value}
      disabled={readOnly}
      onChange={(e) => set({ value: e.target.value })}
    />
  );
}
