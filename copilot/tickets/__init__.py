"""Tickets for reported incidents: one Tracker interface, the built-in tracker and Jira."""
