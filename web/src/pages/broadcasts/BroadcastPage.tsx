// /dashboard/broadcasts/{id}: a draft opens in the composer, a broadcast past draft shows its report; `new` is the
// composer of a broadcast not saved yet.
import { Link, useParams } from 'react-router';
import { api } from '../../api/client';
import { Shown, useLoad } from '../../ui';
import { Composer } from './Composer';
import { Report } from './Report';
import './broadcasts.css';

export default function BroadcastPage() {
  const { id = '' } = useParams();
  return (
    <>
      <p>
        <Link to="/dashboard/broadcasts">← Broadcasts</Link>
      </p>
      {id === 'new' ? <Composer key="new" initial={null} /> : <Existing id={id} />}
    </>
  );
}

function Existing({ id }: { id: string }) {
  const [load, reload] = useLoad(() => api.GET('/broadcasts/{id}', { params: { path: { id } } }), [id]);
  return (
    <Shown load={load} what="the broadcast">
      {(b) =>
        b.status === 'draft' ? (
          <Composer key={b.id} initial={b} reload={reload} />
        ) : (
          <Report key={b.id} broadcast={b} reload={reload} />
        )
      }
    </Shown>
  );
}
