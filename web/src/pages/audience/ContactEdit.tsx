// Editing a contact: address, names, unsubscribed, and a value per contact property of the team (of its type; an
// emptied value is removed). The api's refusal is shown with its field path (`properties.plan`).
import { api, type Schemas } from '../../api/client';
import { Field, FormError, Submit, text, useSubmit } from '../../form';
import { Shown, useLoad } from '../../ui';

type Contact = Schemas['Contact'];
type Property = Schemas['ContactPropertyListItem'];
type Value = string | number | boolean | null;

/** A form value as the property's type; an empty field is null (removes the value). Numbers the api checks. */
function valueOf(p: Property, raw: string): Value {
  if (raw === '') return null;
  if (p.type === 'boolean') return raw === 'true';
  if (p.type === 'number') return Number.isFinite(Number(raw)) ? Number(raw) : raw;
  return raw;
}

export function ContactEdit({ contact, done }: { contact: Contact; done: () => void }) {
  const [props] = useLoad(() => api.GET('/contact-properties', { params: { query: { limit: '100' } } }), []);
  const list = props.state === 'ready' ? props.data.data : [];
  const save = useSubmit(
    (f) =>
      api.PATCH('/contacts/{id_or_email}', {
        params: { path: { id_or_email: contact.id } },
        body: {
          email: text(f, 'email'),
          first_name: text(f, 'first_name') || null,
          last_name: text(f, 'last_name') || null,
          unsubscribed: f.get('unsubscribed') === 'on',
          properties: Object.fromEntries(list.map((p) => [p.key, valueOf(p, text(f, `property.${p.key}`))])),
        },
      }),
    done,
  );
  return (
    <form className="panel stack" id="contact-edit-form" onSubmit={save.onSubmit}>
      <h2>Edit</h2>
      <Field label="Address" name="email" required defaultValue={contact.email} />
      <Field label="First name" name="first_name" defaultValue={contact.first_name ?? ''} />
      <Field label="Last name" name="last_name" defaultValue={contact.last_name ?? ''} />
      <label className="check">
        <input type="checkbox" name="unsubscribed" defaultChecked={contact.unsubscribed} />
        <span>Unsubscribed from everything</span>
      </label>
      <Shown load={props} what="contact properties">
        {(l) => (
          <fieldset className="properties">
            <legend>Properties</legend>
            {l.data.length === 0 ? <p className="hint">The team has no contact properties.</p> : null}
            {l.data.map((p) => (
              <PropertyInput key={p.id} p={p} value={contact.properties[p.key]?.value} />
            ))}
          </fieldset>
        )}
      </Shown>
      <Submit busy={save.busy}>Save contact</Submit>
      <FormError error={save.error} />
    </form>
  );
}

function PropertyInput({ p, value }: { p: Property; value: Value | undefined }) {
  const name = `property.${p.key}`;
  const shown = value === undefined || value === null ? '' : String(value);
  if (p.type === 'boolean')
    return (
      <label className="field">
        <span>{p.key}</span>
        <select name={name} defaultValue={shown}>
          <option value="">(none)</option>
          <option value="true">true</option>
          <option value="false">false</option>
        </select>
      </label>
    );
  return (
    <label className="field">
      <span>
        {p.key} <span className="hint">({p.type})</span>
      </span>
      <input name={name} defaultValue={shown} inputMode={p.type === 'number' ? 'decimal' : undefined} />
    </label>
  );
}
