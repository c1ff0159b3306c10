// Every operator command, by name. The CLI (main.ts) reads the declarations for its help and flag checks.
import type { Knex } from 'knex';
import type { CliConfig, Command, Flags } from './command.ts';
import { domainCommands } from './domain-commands.ts';
import { teamCommands } from './team-commands.ts';
import { accountCommands } from './account-commands.ts';

export { createTeamWithKey, teamJson } from './team-commands.ts';
export { parseArgs, UsageError, type CliConfig, type Flags } from './command.ts';

export const cliCommands: Record<string, Command> = { ...teamCommands, ...domainCommands, ...accountCommands };

/** Each command's run, by name (what the tests call directly). */
export const commands: Record<string, (db: Knex, flags: Flags, config: CliConfig) => Promise<unknown>> =
  Object.fromEntries(Object.entries(cliCommands).map(([name, c]) => [name, c.run.bind(c)]));

/** `--help` of the CLI: every command with its summary. */
export function overview(): string {
  const width = Math.max(...Object.keys(cliCommands).map((n) => n.length));
  const lines = Object.entries(cliCommands).map(([name, c]) => `  ${name.padEnd(width)}  ${c.summary}`);
  return [
    'usage: npm run cli -- <command> [--flag value ...]   (JSON on stdout; errors as JSON on stderr)',
    '',
    'commands:',
    ...lines,
    '',
    '`npm run cli -- <command> --help` lists its flags.',
    '',
  ].join('\n');
}

/** `<command> --help`: its summary and one line per flag. */
export function usage(name: string, command: Command): string {
  const flags = Object.entries(command.flags).map(([flag, spec]) => {
    const left = `--${flag}${spec.value ? ` ${spec.value}` : ''}`;
    return [left, `${spec.help}${spec.required ? ' (required)' : ''}`, spec.required] as const;
  });
  const width = Math.max(0, ...flags.map(([l]) => l.length));
  return [
    `usage: npm run cli -- ${name}${flags.map(([l, , required]) => (required ? ` ${l}` : ` [${l}]`)).join('')}`,
    '',
    command.summary,
    ...(flags.length ? ['', 'flags:', ...flags.map(([l, h]) => `  ${l.padEnd(width)}  ${h}`)] : []),
    '',
  ].join('\n');
}
