// A segment: its name and filter, built with the filter builder, with a live count of the contacts the filter
// matches (POST /segments/count as it changes), and a saved one's members with a search among them. New at
// /dashboard/segments/new; viewers see it read-only.
import { useEffect, useMemo, useState, type FormEvent } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import { api, asApiError, type ApiError, type Schemas } from '../../api/client';
import { ErrorBox, Shown, useLoad } from '../../ui';
import { ConfirmDelete, useAction, useMember } from './common';
import { SegmentMembers } from './SegmentMembers';
import { FilterNode, type Choices } from './FilterBuilder';
import { fromFilter, toFilter, type Group, type Node, type PropertyType } from './filter-model';

export default function SegmentEdit() {
  const { id } = useParams();
  const [segment, reload] = useLoad(
    async () =>
      id ? api.GET('/segments/{id}', { params: { path: { id } } }) : { data: null, response: new Response() },
    [id],
  );
  const [properties] = useLoad(() => api.GET('/contact-properties', { params: { query: { limit: '100' } } }), []);
  const [topics] = useLoad(() => api.GET('/topics', { params: { query: { limit: '100' } } }), []);
  return (
    <>
      <p className="crumbs">
        <Link to="/dashboard/segments">Segments</Link>
      </p>
      <Shown load={segment} what="the segment">
        {(s) => (
          <Shown load={properties} what="contact properties">
            {(p) => (
              <Shown load={topics} what="topics">
                {(t) => (
                  <>
                    <Editor
                      key={id ?? 'new'}
                      segment={s}
                      choices={{ properties: p.data, topics: t.data }}
                      saved={reload}
                    />
                    {s ? <SegmentMembers segmentId={s.id} /> : null}
                  </>
                )}
              </Shown>
            )}
          </Shown>
        )}
      </Shown>
    </>
  );
}

function Editor(props: { segment: Schemas['Segment'] | null; choices: Choices; saved: () => void }) {
  const { segment, choices } = props;
  const member = useMember();
  const navigate = useNavigate();
  const [name, setName] = useState(segment?.name ?? '');
  const [root, setRoot] = useState<Group>(() => fromFilter(segment?.filter));
  const [refusal, setRefusal] = useState<ApiError | null>(null);
  const [busy, setBusy] = useState(false);
  const del = useAction();
  const types = useMemo(() => new Map(choices.properties.map((p) => [p.key, p.type as PropertyType])), [choices]);
  const filter = useMemo(() => toFilter(root, types), [root, types]);
  async function save(e: FormEvent) {
    e.preventDefault();
    setBusy(true);
    setRefusal(null);
    const r = segment
      ? await api.PATCH('/segments/{id}', {
          params: { path: { id: segment.id } },
          body: { name, filter: filter as never },
        })
      : await api.POST('/segments', { body: { name, filter: filter as never } });
    setBusy(false);
    // A new segment gets its own URL; a saved one is read again (its count as saved, its filter as stored).
    if (r.response.ok && r.data) {
      if (segment) props.saved();
      else navigate(`/dashboard/segments/${r.data.id}`);
    } else setRefusal(asApiError(r.error, r.response.status));
  }
  return (
    <form id="segment-form" onSubmit={(e) => void save(e)}>
      <div className="heading-row">
        <h1>{segment ? segment.name : 'New segment'}</h1>
        {segment && member ? (
          <ConfirmDelete
            what={segment.name}
            busy={del.busy}
            onConfirm={() =>
              void del.run(
                () => api.DELETE('/segments/{id}', { params: { path: { id: segment.id } } }),
                () => navigate('/dashboard/segments'),
              )
            }
          />
        ) : null}
      </div>
      {del.error ? <ErrorBox error={del.error} /> : null}
      <label className="field">
        <span>Name</span>
        <input name="name" value={name} required disabled={!member} onChange={(e) => setName(e.target.value)} />
      </label>
      <h2>Who is in it</h2>
      <p className="hint">Contacts added by hand, and every contact the filter below matches, now or later.</p>
      <FilterNode
        node={root}
        path="filter"
        choices={choices}
        errors={refusal?.errors ?? []}
        readOnly={!member}
        onChange={(n: Node) => setRoot(n as Group)}
      />
      <LiveCount filter={filter} saved={segment?.count} onRefused={setRefusal} />
      {refusal ? <ErrorBox error={refusal} /> : null}
      {member ? (
        <button type="submit" disabled={busy} aria-busy={busy}>
          {busy ? 'Saving…' : segment ? 'Save segment' : 'Create segment'}
        </button>
      ) : null}
    </form>
  );
}

/** The contacts the filter matches now, asked again half a second after the last change. */
function LiveCount(props: {
  filter: Record<string, unknown> | null;
  saved?: number;
  onRefused: (e: ApiError | null) => void;
}) {
  const { filter, onRefused } = props;
  const json = JSON.stringify(filter);
  const [count, setCount] = useState<{ state: 'idle' | 'counting' | 'done' | 'refused'; n?: number }>({
    state: 'idle',
  });
  useEffect(() => {
    if (filter === null) {
      setCount({ state: 'idle' });
      return;
    }
    let live = true;
    setCount({ state: 'counting' });
    const t = setTimeout(() => {
      const refused = (e: ApiError) => {
        setCount({ state: 'refused' });
        onRefused(e);
      };
      api
        .POST('/segments/count', { body: { filter: filter as never } })
        .then((r) => {
          if (!live) return;
          if (r.response.ok && r.data) {
            setCount({ state: 'done', n: r.data.count });
            onRefused(null);
          } else refused(asApiError(r.error, r.response.status));
        })
        // Not answered at all (the api unreachable): said below, as a refusal is, instead of counting for ever.
        .catch((e) => live && refused(asApiError(e)));
    }, 500);
    return () => {
      live = false;
      clearTimeout(t);
    };
    // The filter's JSON, not its identity: a re-render with the same filter asks nothing.
  }, [json]);
  return (
    <p className="live-count" role="status" aria-live="polite" id="live-count">
      {count.state === 'idle'
        ? 'No filter: only contacts added by hand are members.'
        : count.state === 'counting'
          ? 'Counting…'
          : count.state === 'refused'
            ? 'The filter cannot be counted yet: see below.'
            : `The filter matches ${count.n!.toLocaleString()} contact${count.n === 1 ? '' : 's'} now.`}
      {props.saved !== undefined ? ` Members as saved: ${props.saved.toLocaleString()}.` : ''}
    </p>
  );
}
