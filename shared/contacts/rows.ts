// The contacts table's row, on its own so that every file of the area can name it without importing another's code.
import type { PropertyValue } from './property-values.ts';

export interface ContactRow {
  id: string;
  team_id: string;
  /** As given, the domain lower case and in ASCII (shared/contacts/address.ts). */
  email: string;
  first_name: string | null;
  last_name: string | null;
  unsubscribed: boolean;
  /** An import said never_subscribed: no topic's opt_in default reaches it, only its own choices. */
  never_subscribed?: boolean;
  /** Values of the team's contact properties, by key. */
  properties: Record<string, PropertyValue>;
  created_at: Date;
  updated_at: Date;
}
