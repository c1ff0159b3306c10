// The MX's short memory of the receiving domains it found at RCPT (recipients.ts): a host that took mail within the
// last INBOUND_RCPT_CACHE_MS takes the next RCPT without a query (a run of messages to one domain is most of an MX's
// traffic; the lookup was one of the two statements a message cost before its 250). Only a host that is served is
// remembered, so a domain that starts receiving is never refused for it; one that stops receiving may still be
// accepted for that long, and the receive job, which looks again without this memory, drops such a message as
// `no_mailbox` (no backscatter: the sender got a 250, nothing is bounced). Return-path addresses are never cached.

/** A receiving domain's answer to RCPT (recipients.ts's `Recipient` of kind `mail`). */
export interface Served {
  kind: 'mail';
  teamId: string;
  domainId: string;
}

/** Hosts remembered at most; the oldest go first (Map order is insertion order). */
const MAX_HOSTS = 10_000;

export class RecipientCache {
  private readonly hosts = new Map<string, { recipient: Served; until: number }>();

  constructor(
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  get(host: string): Served | undefined {
    const hit = this.hosts.get(host);
    if (!hit) return undefined;
    if (hit.until > this.now()) return hit.recipient;
    this.hosts.delete(host);
    return undefined;
  }

  set(host: string, recipient: Served): void {
    if (this.ttlMs <= 0) return;
    this.hosts.delete(host);
    this.hosts.set(host, { recipient, until: this.now() + this.ttlMs });
    if (this.hosts.size > MAX_HOSTS) this.hosts.delete(this.hosts.keys().next().value!);
  }
}
