"""Protocol fakes of the realtime providers (loopback websockets speaking the real wire protocols)."""
