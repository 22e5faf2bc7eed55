"""Standalone script run as a FRESH process per clip: load espeak-ng, synthesize one text, exit.

espeak-ng 1.52 keeps hidden state across utterances in one process (the same text gives different
samples after other texts, and Terminate/Initialize does not reset it), so bit-reproducible output
needs one fresh process per clip with a fixed random seed. Run as a script (not a multiprocessing
child), it imports nothing of the harness and never re-runs the caller's ``__main__``.

Protocol: stdin is JSON ``{"text", "voice", "rate_wpm"}`` (or the argument ``--version``); stdout is
one JSON header line ``{"num_samples", "words": [[text_position, length, audio_ms]...], "ends":
[audio_ms...]}`` followed by the little-endian int16 samples at 22050 Hz.
"""

from __future__ import annotations

import ctypes
import json
import os
import sys
from typing import Any

__all__ = ["main"]

_ESPEAK_RATE = 22_050
_AUDIO_OUTPUT_SYNCHRONOUS = 2
_POS_CHARACTER = 1
_CHARS_UTF8 = 1
_PARAM_RATE = 1
_EVENT_LIST_TERMINATED = 0
_EVENT_WORD = 1
_EVENT_END = 5
_EVENT_MSG_TERMINATED = 6
_RAND_SEED = 1


class _Event(ctypes.Structure):
    _fields_ = [
        ("type", ctypes.c_int),
        ("unique_identifier", ctypes.c_uint),
        ("text_position", ctypes.c_int),
        ("length", ctypes.c_int),
        ("audio_position", ctypes.c_int),
        ("sample", ctypes.c_int),
        ("user_data", ctypes.c_void_p),
        ("id", ctypes.c_char * 8),
    ]


_Callback = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_short), ctypes.c_int, ctypes.POINTER(_Event))


def _library() -> ctypes.CDLL:
    import espeakng_loader

    lib = ctypes.CDLL(espeakng_loader.get_library_path())
    data_root = os.path.dirname(espeakng_loader.get_data_path()).encode()
    rate = lib.espeak_Initialize(_AUDIO_OUTPUT_SYNCHRONOUS, 0, data_root, 0)
    if rate != _ESPEAK_RATE:
        raise SystemExit(f"espeak-ng initialised at {rate} Hz, expected {_ESPEAK_RATE} Hz")
    return lib


def _synthesize(text: str, voice: str, rate_wpm: int) -> tuple[bytes, dict[str, object]]:
    lib = _library()
    chunks: list[bytes] = []
    words: list[list[int]] = []
    ends: list[int] = []

    def on_audio(wav: Any, count: int, events: Any) -> int:  # ctypes pointers
        if count > 0:
            chunks.append(ctypes.string_at(wav, count * 2))
        index = 0
        while events[index].type != _EVENT_LIST_TERMINATED:
            event = events[index]
            if event.type == _EVENT_WORD:
                words.append([event.text_position, event.length, event.audio_position])
            elif event.type in (_EVENT_END, _EVENT_MSG_TERMINATED):
                ends.append(event.audio_position)
            index += 1
        return 0

    callback = _Callback(on_audio)  # referenced until synthesis returns
    lib.espeak_SetSynthCallback(callback)
    if lib.espeak_SetVoiceByName(voice.encode()) != 0:
        raise SystemExit(f"espeak-ng has no voice {voice!r}")
    lib.espeak_SetParameter(_PARAM_RATE, rate_wpm, 0)
    lib.espeak_ng_SetRandSeed(ctypes.c_long(_RAND_SEED))
    encoded = text.encode() + b"\0"
    status = lib.espeak_Synth(encoded, len(encoded), 0, _POS_CHARACTER, 0, _CHARS_UTF8, None, None)
    if status != 0:
        raise SystemExit(f"espeak_Synth failed with status {status} for text {text!r}")
    lib.espeak_Synchronize()
    pcm = b"".join(chunks)
    if sys.byteorder != "little":
        import array

        samples = array.array("h", pcm)
        samples.byteswap()
        pcm = samples.tobytes()
    return pcm, {"num_samples": len(pcm) // 2, "words": words, "ends": ends}


def main() -> None:
    if sys.argv[1:] == ["--version"]:
        lib = _library()
        lib.espeak_Info.restype = ctypes.c_char_p
        sys.stdout.write(lib.espeak_Info(None).decode())
        return
    request = json.loads(sys.stdin.buffer.read().decode())
    pcm, header = _synthesize(request["text"], request["voice"], int(request["rate_wpm"]))
    sys.stdout.buffer.write(json.dumps(header).encode() + b"\n" + pcm)
    sys.stdout.buffer.flush()


if __name__ == "__main__":
    main()
