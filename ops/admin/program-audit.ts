/**
 * The audit trail's command of the admin CLI (`audit list`); what it prints is ops/admin/audit.ts.
 */
import type { Command as Program } from 'commander';
import * as v from 'valibot';
import { CustomerIdSchema } from '../../lib/accounts/repository.ts';
import { group, sub } from './help.ts';
import { type Command, once, valid } from './parse.ts';

/** How many audit events `audit list` prints. */
const AuditLimitSchema = v.pipe(
  v.string(),
  v.regex(/^(?:[1-9]\d{0,3}|10000)$/, 'must be a whole number from 1 to 10000'),
  v.transform(Number),
);

export function addAuditCommands(program: Program, run: (command: Command) => void): void {
  const AUDIT =
    'Audit trail (every change of a credential by an operator, who is $AUDIT_ACTOR or else the\n' +
    "operating system's user, and every failed authentication of an existing API client: docs/admin.md)";
  const audit = group(program, 'audit', AUDIT, 'read the audit trail');
  sub(
    audit,
    'list',
    AUDIT,
    'the newest events first, as JSON Lines: at, customerId, type, actor (operator:<name> or ' +
      'client:<clientId>), source (operator or api), sourceIp, clientId, secretId, username, ' +
      'reason, as the event has them',
  )
    .option(
      '--customer <customerId>',
      "only the customer's events (one query; without it, a scan of every customer's)",
      once('customer', valid(CustomerIdSchema, '--customer')),
    )
    .option(
      '--limit <n>',
      'at most n events, 1 to 10000 (default 100)',
      once('limit', valid(AuditLimitSchema, '--limit')),
    )
    .action((options: { customer?: string; limit?: number }) =>
      run({ name: 'audit list', customerId: options.customer, limit: options.limit ?? 100 }),
    );
}
