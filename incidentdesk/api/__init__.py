"""What every app's API shares: errors, pagination, throttling, SSE, schema helpers."""
