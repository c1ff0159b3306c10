// Domains: the list and adding one (members and admins).
import { Link, useNavigate } from 'react-router';
import { api } from '../api/client';
import { Field, FormError, Submit, text, useSubmit } from '../form';
import { can, useSession } from '../session';
import { formatTime } from '../time';
import { Empty, Shown, useLoad } from '../ui';

export function Domains() {
  const { load: session } = useSession();
  const member = session.state === 'ready' && can(session.data.role, 'member');
  const navigate = useNavigate();
  const [domains] = useLoad(() => api.GET('/domains', { params: { query: { limit: '100' } } }), []);
  const add = useSubmit(
    (f) => api.POST('/domains', { body: { name: text(f, 'name') } }),
    (d) => navigate(`/dashboard/domains/${d.id}`),
  );
  return (
    <>
      <h1>Domains</h1>
      {member ? (
        <form className="panel inline" onSubmit={add.onSubmit} id="add-domain-form">
          <Field label="Domain name" name="name" required />
          <Submit busy={add.busy}>Add domain</Submit>
          <FormError error={add.error} />
        </form>
      ) : null}
      <Shown load={domains} what="domains">
        {(list) =>
          list.data.length === 0 ? (
            <Empty>No domains yet.{member ? ' Add the domain you send from above.' : ''}</Empty>
          ) : (
            <div className="table-wrap">
              <table>
                <thead>
                  <tr>
                    <th scope="col">Domain</th>
                    <th scope="col">Status</th>
                    <th scope="col">Region</th>
                    <th scope="col">Added</th>
                  </tr>
                </thead>
                <tbody>
                  {list.data.map((d) => (
                    <tr key={d.id}>
                      <td>
                        <Link to={`/dashboard/domains/${d.id}`}>{d.name}</Link>
                      </td>
                      <td>
                        <span className={`badge ${d.status}`}>{d.status}</span>
                      </td>
                      <td>{d.region}</td>
                      <td>{formatTime(d.created_at)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )
        }
      </Shown>
    </>
  );
}
