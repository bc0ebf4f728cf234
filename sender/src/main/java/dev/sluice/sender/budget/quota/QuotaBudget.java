package dev.sluice.sender.budget.quota;

import dev.sluice.metrics.BudgetState;
import dev.sluice.sender.budget.BudgetPort;
import dev.sluice.sender.budget.BudgetRequest;
import dev.sluice.sender.budget.Decision;
import dev.sluice.sender.budget.ForwardingBudget;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * Quota mode: a pacing budget (Redis GCRA, the fast path) with a contractual hard cap
 * ({@link PostgresQuota}, the source of truth) on top. A request passes the pacing first and only then takes
 * a quota unit, so a unit is never spent on a request the pacing refused (a pacing slot spent on a request the
 * quota then refuses is only lost pacing). While the key's quota is known to be used up, the pacing is not
 * asked at all.
 *
 * <p>Redis lost: the pacing falls back as configured ({@link dev.sluice.sender.budget.ResilientBudget}) and
 * PostgreSQL alone keeps the cap. PostgreSQL lost: refused with {@code UNAVAILABLE} beyond the units already
 * leased (fail-closed), state {@link BudgetState#PAUSED}.
 *
 * <p><b>Capabilities</b> (finding F7): everything but the decision and the state goes to the pacing
 * ({@link ForwardingBudget}), and a pacing grant the quota also grants is returned as the pacing made it, so a
 * reservation keeps its instant, a grant its arrival-guard number and a request its folded sent-mark check, for
 * keys with and without a quota. A reserved slot takes its quota unit when it is reserved: a slot that passes
 * unused ({@code budget.reservation.late.max.ms}) has spent the unit, like a grant whose call then fails.
 *
 * <p>Thread-safe (the pacing is, {@link PostgresQuota} synchronizes). Owns both and closes them.
 */
public final class QuotaBudget extends ForwardingBudget {
    private final PostgresQuota quota;

    /** Takes ownership of both: {@link #close()} closes them. */
    public QuotaBudget(BudgetPort pacing, PostgresQuota quota) {
        super(pacing);
        this.quota = Objects.requireNonNull(quota, "quota");
    }

    @Override
    public Decision tryAcquire(BudgetRequest request) {
        return tryAcquireAll(request.botId(), List.of(request)).get(0);
    }

    @Override
    public List<Decision> tryAcquireAll(String botId, List<BudgetRequest> requests) {
        if (!quota.covers(botId)) {
            return delegate.tryAcquireAll(botId, requests);
        }
        java.util.Optional<Decision> known = quota.knownRefusal(botId);
        if (known.isPresent()) {
            return java.util.Collections.nCopies(requests.size(), known.get());
        }
        List<Decision> paced = delegate.tryAcquireAll(botId, requests);
        List<Decision> out = new ArrayList<>(paced.size());
        Decision refusal = null;
        for (Decision d : paced) {
            if (!d.granted()) {
                out.add(d);
            } else if (refusal != null) {
                out.add(refusal); // the quota already refused one of this batch: do not ask again
            } else {
                Decision q = quota.take(botId);
                if (q.granted()) {
                    out.add(d); // the pacing's grant: its reservation instant, guard number and mark check
                } else {
                    refusal = q;
                    out.add(q);
                }
            }
        }
        return out;
    }

    /** PAUSED while PostgreSQL is down, else the pacing's state. */
    @Override
    public BudgetState state() {
        return quota.isDown() ? BudgetState.PAUSED : delegate.state();
    }

    /** The quota store, for usage reads and measurements. */
    public PostgresQuota quota() {
        return quota;
    }

    @Override
    public void close() {
        try {
            quota.close();
        } finally {
            delegate.close();
        }
    }
}
