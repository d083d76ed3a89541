"""Process exit codes, the same for every command."""

#: Nothing at or above the fail threshold was found.
OK = 0
#: Findings at or above the fail threshold (or `render --check` found drift).
FINDINGS = 1
#: Usage error or unusable input: nothing was checked or written.
INPUT_ERROR = 2
#: Interrupted (Ctrl-C, SIGINT): 128 + the signal number, as a shell reports it.
INTERRUPTED = 130
