"""Adapters for live speech-to-speech providers, one module each, with typed wire models.

``ws_adapter`` holds what every websocket provider shares (handshake, reader task, error
classification); ``openai_realtime`` speaks the GA Realtime protocol and is the base of the
OpenAI-style dialects (xAI, StepFun); each ``*_wire`` module types the events its adapter uses.
"""
