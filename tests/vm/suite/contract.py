# The JSON contract (doc/json/COMMAND.schema.json): where a command's --json
# output breaks its schema.
import json
import os
import threading

DOC = os.path.join(os.path.dirname(__file__), "..", "..", "..", "doc", "json")
_validators = {}
_lock = threading.Lock()


def schema_errors(command, doc):
    """Lines saying where doc breaks COMMAND.schema.json (at most 10)."""
    try:
        import jsonschema
    except ImportError:
        return ["python3-jsonschema is not installed: the JSON contract cannot be checked"]
    with _lock:
        if command not in _validators:
            with open(os.path.join(DOC, "%s.schema.json" % command)) as f:
                _validators[command] = jsonschema.Draft202012Validator(json.load(f))
        v = _validators[command]
    return ["%s schema: %s at /%s" % (command, e.message[:200], "/".join(str(p) for p in e.absolute_path))
            for e in v.iter_errors(doc)][:10]
