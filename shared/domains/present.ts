// The API and webhook shapes of a domain (interface spec, Domain; resend-api.md §4 for domain.*).
import { isoRequired } from '../time.ts';
import type { DomainRow, RecordRow } from './store.ts';

export function presentRecord(r: RecordRow) {
  return {
    record: r.record,
    name: r.name,
    type: r.type,
    ttl: 'Auto',
    status: r.status,
    value: r.value,
    ...(r.priority !== null && r.priority !== undefined ? { priority: r.priority } : {}),
  };
}

export function capabilities(d: DomainRow) {
  return { sending: d.sending, receiving: d.receiving };
}

export function presentListItem(d: DomainRow) {
  return {
    id: d.id,
    name: d.name,
    status: d.status,
    created_at: isoRequired(d.created_at),
    region: d.region,
    open_tracking: d.open_tracking,
    click_tracking: d.click_tracking,
    capabilities: capabilities(d),
    managed: d.managed,
  };
}

export function presentDomain(d: DomainRow, records: RecordRow[]) {
  return {
    object: 'domain' as const,
    ...presentListItem(d),
    tracking_subdomain: d.tracking_subdomain,
    receiving_host: d.receiving_host,
    custom_return_path: d.custom_return_path,
    tls: d.tls,
    records: d.managed ? [] : records.map(presentRecord),
  };
}

/** `data` of domain.created / domain.updated / domain.deleted. */
export function domainEventData(d: DomainRow, records: RecordRow[]) {
  const { object: _object, ...rest } = presentDomain(d, records);
  return rest;
}
