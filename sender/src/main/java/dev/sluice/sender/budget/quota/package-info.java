/**
 * Quota mode (issue 8): contractual limits that must not be exceeded even when Redis is lost.
 * {@link dev.sluice.sender.budget.quota.PostgresQuota} counts every unit in PostgreSQL with one atomic conditional
 * upsert per (key, window) before handing it out (leasing small blocks to cut round trips);
 * {@link dev.sluice.sender.budget.quota.QuotaBudget} puts it on top of the Redis GCRA, which still paces. Config:
 * {@link dev.sluice.sender.budget.quota.QuotaConfig}.
 */
package dev.sluice.sender.budget.quota;
