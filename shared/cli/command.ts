// The shape of an operator command: what it does, its flags (each with one line of help), and its run. The
// CLI's help, its flag checks and its dispatch all read these declarations.
import type { Knex } from 'knex';
import type { Config } from '../config.ts';
import type { PlatformHosts } from '../domains/records.ts';
import { isUuid } from '../ids.ts';

export type Flags = Record<string, string | true>;

export type CliConfig = Pick<
  Config,
  'MANAGED_DOMAIN_HOST' | 'MANAGED_DKIM_SELECTOR' | 'SECRETS_KEY' | 'SECRETS_KEY_FILE'
> &
  PlatformHosts;

export interface Flag {
  help: string;
  required?: boolean;
  /** A value such as `ID` or `N` shown in the help; none: a switch. */
  value?: string;
}

export interface Command {
  summary: string;
  flags: Record<string, Flag>;
  run(db: Knex, flags: Flags, config: CliConfig): Promise<unknown>;
}

/** A mistake in how a command was called: its message is the whole answer (exit 2). */
export class UsageError extends Error {}

export function need(flags: Flags, name: string): string {
  const v = flags[name];
  if (typeof v !== 'string' || v === '') throw new UsageError(`--${name} is required`);
  return v;
}

export const teamFlag: Flag = { help: 'the team id (uuid; `team list` shows them)', required: true, value: 'ID' };

/** Flags the command does not know, required flags missing, a switch given a value or a value flag none. */
export function checkFlags(name: string, command: Command, flags: Flags): void {
  for (const [flag, value] of Object.entries(flags)) {
    const known = command.flags[flag];
    if (!known) throw new UsageError(`${name}: unknown flag --${flag} (see \`${name} --help\`)`);
    if (known.value && value === true) throw new UsageError(`--${flag} needs a value (${known.value})`);
  }
  for (const [flag, spec] of Object.entries(command.flags))
    if (spec.required && flags[flag] === undefined) throw new UsageError(`--${flag} is required`);
  if (typeof flags.team === 'string' && !isUuid(flags.team)) throw new UsageError('--team must be a team id (uuid)');
}

export function parseArgs(argv: string[]): { command: string; flags: Flags; help: boolean } {
  const words: string[] = [];
  const flags: Flags = {};
  let help = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--help' || a === '-h') help = true;
    else if (a.startsWith('--')) {
      const [k, inline] = a.slice(2).split(/=(.*)/s, 2);
      if (inline !== undefined) flags[k] = inline;
      else if (argv[i + 1] !== undefined && !argv[i + 1].startsWith('--')) flags[k] = argv[++i];
      else flags[k] = true;
    } else words.push(a);
  }
  return { command: words.join(' '), flags, help: help || words[0] === 'help' };
}
