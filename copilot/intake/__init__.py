"""Incident intake: new reports planned and executed step by step, tickets, the ledger."""
