// The composer's actions: save (create or update), send now or at a time, duplicate and delete. Each shows the api's
// refusal and loses nothing typed: a save refused because the session ended stashes the draft for after a reload,
// and a refusal naming a block (or failing checks naming one) selects that block.
import { useNavigate } from 'react-router';
import { api, asApiError, type ApiError, type Schemas } from '../../api/client';
import { useConfirm } from '../../dialog';
import { contentBody, stashDraft, type Broadcast, type Draft } from './draft';
import type { SendRequest } from './SendPanel';

type Check = Schemas['EmailCheck'];

export const refusedChecks = (e: ApiError) => (e as { details?: { checks?: Check[] } }).details?.checks;
const blockOf = (e: ApiError) => (e as { details?: { block_id?: unknown } }).details?.block_id;

export function useActions(o: {
  initial: Broadcast | null;
  draft: Draft;
  dirty: boolean;
  reload?: () => void;
  goTo: (blockId: string) => void;
  setBase: (d: Draft) => void;
  setError: (e: ApiError | null) => void;
  setBusy: (what: string | null) => void;
  setSaid: (said: string) => void;
}) {
  const navigate = useNavigate();
  const confirm = useConfirm();
  const { initial, draft, dirty, reload, goTo, setBase, setError, setBusy, setSaid } = o;
  const stashId = initial?.id ?? 'new';
  /** Saves the draft when it changed; the broadcast's id (a new one is created). */
  async function save(): Promise<string> {
    if (initial && !dirty) return initial.id;
    const r = initial
      ? await api.PATCH('/broadcasts/{id}', { params: { path: { id: initial.id } }, body: contentBody(draft) })
      : await api.POST('/broadcasts', { body: contentBody(draft) });
    if (!r.data) throw asApiError(r.error, r.response.status);
    return r.data.id;
  }
  /** `act` answers where to go next (null: stay); a refusal is shown and nothing typed is lost. */
  async function run(what: string, act: () => Promise<string | null>) {
    setBusy(what);
    setError(null);
    setSaid('');
    try {
      const next = await act();
      if (next) navigate(next, { replace: !initial });
    } catch (e) {
      const failed = asApiError(e);
      setError(failed);
      if (failed.statusCode === 401) stashDraft(stashId, draft);
      const block = blockOf(failed) ?? refusedChecks(failed)?.find((c) => c.status === 'fail' && c.block_id)?.block_id;
      if (typeof block === 'string') goTo(block);
    } finally {
      setBusy(null);
    }
  }
  const saveOnly = () =>
    run('save', async () => {
      const id = await save();
      if (!initial) return `/dashboard/broadcasts/${id}`;
      setBase(draft);
      setSaid('Draft saved.');
      return null;
    });
  const send = (req: SendRequest) =>
    run('send', async () => {
      const id = await save();
      setBase(draft);
      const r = await api.POST('/broadcasts/{id}/send', { params: { path: { id } }, body: req });
      if (!r.response.ok) throw asApiError(r.error, r.response.status);
      reload?.();
      return null;
    });
  const other = async (what: 'duplicate' | 'delete') => {
    if (what === 'delete' && !(await confirm.ask(`Delete the draft “${initial?.name ?? ''}”?`, 'Delete'))) return;
    await run(what, async () => {
      if (!initial) return null;
      const p = { params: { path: { id: initial.id } } };
      const r =
        what === 'delete' ? await api.DELETE('/broadcasts/{id}', p) : await api.POST('/broadcasts/{id}/duplicate', p);
      if (!r.data) throw asApiError(r.error, r.response.status);
      return what === 'delete' ? '/dashboard/broadcasts' : `/dashboard/broadcasts/${r.data.id}`;
    });
  };

  return { saveOnly, send, other, confirm: confirm.dialog };
}
