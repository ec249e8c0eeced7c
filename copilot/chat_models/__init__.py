"""Chat models: one interface, an OpenAI-compatible client and the offline engine."""
