// A saved segment's members on its page, searched by address or name within the segment (GET /contacts with
// `segment_id` and `search`); the search is in the URL (`?search=`), as the contacts page keeps its own.
import { useState } from 'react';
import { Link, useSearchParams } from 'react-router';
import { api } from '../../api/client';
import { Empty, Shown, useLoad } from '../../ui';
import { ContactTable } from './Contacts';

const PAGE = 50;

export function SegmentMembers({ segmentId }: { segmentId: string }) {
  const [params, setParams] = useSearchParams();
  const search = params.get('search') ?? undefined;
  const [q, setQ] = useState(search ?? '');
  const [list] = useLoad(
    () =>
      api.GET('/contacts', {
        params: { query: { limit: String(PAGE), segment_id: segmentId, ...(search ? { search } : {}) } },
      }),
    [segmentId, search],
  );
  return (
    <section aria-labelledby="members-title" className="segment-members">
      <h2 id="members-title">Members</h2>
      <form
        className="inline-form"
        role="search"
        aria-label="Among the members"
        id="segment-search"
        onSubmit={(e) => {
          e.preventDefault();
          const next = new URLSearchParams(params);
          if (q.trim()) next.set('search', q.trim());
          else next.delete('search');
          setParams(next);
        }}
      >
        <label className="field search">
          <span>Search this segment</span>
          <input type="search" value={q} onChange={(e) => setQ(e.target.value)} placeholder="Address or name" />
        </label>
        <button type="submit">Search</button>
      </form>
      <Shown load={list} what="the segment's members">
        {(l) =>
          l.data.length === 0 ? (
            <Empty>
              {search ? `No member's address or name contains “${search}”.` : 'This segment has no members yet.'}
            </Empty>
          ) : (
            <>
              <ContactTable rows={l.data} />
              {l.has_more ? (
                <p>
                  <Link
                    to={`/dashboard/contacts?segment=${encodeURIComponent(segmentId)}${
                      search ? `&search=${encodeURIComponent(search)}` : ''
                    }`}
                  >
                    Every match, a page at a time
                  </Link>
                </p>
              ) : null}
            </>
          )
        }
      </Shown>
    </section>
  );
}
