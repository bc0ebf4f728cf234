package dev.sluice.sender;

/** Where the provider budget is decided ({@code budget.mode}). */
public enum BudgetMode {
    /** One shared budget in Redis for every sender replica (production). */
    REDIS,
    /** Each process decides alone; N processes can send N times the limit (demo of why Redis is needed). */
    LOCAL
}
