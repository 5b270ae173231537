"""kerneljudge harness: runs inside the sandbox, reports facts, never decides verdicts."""
