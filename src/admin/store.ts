/** Server statistics: row counts across the domains, for GET /api/admin/stats. */
import type { Knex } from 'knex';

async function count(query: Knex.QueryBuilder): Promise<number> {
  const [row] = await query.count<Array<{ total: number | string }>>({ total: '*' });
  return Number(row?.total ?? 0);
}

export interface ResourceCounts {
  users: number;
  serviceAccounts: number;
  orgs: number;
  teams: number;
  folders: number;
  dashboards: number;
  alertRules: number;
  connectors: number;
}

export async function countResources(db: Knex): Promise<ResourceCounts> {
  const [users, serviceAccounts, orgs, teams, folders, dashboards, alertRules, connectors] = await Promise.all([
    count(db('users').where('is_service_account', false)),
    count(db('users').where('is_service_account', true)),
    count(db('orgs')),
    count(db('teams')),
    count(db('folders')),
    count(db('dashboards')),
    count(db('alert_rules')),
    count(db('connectors')),
  ]);
  return { users, serviceAccounts, orgs, teams, folders, dashboards, alertRules, connectors };
}
