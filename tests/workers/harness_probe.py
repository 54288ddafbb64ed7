"""The resident launch's own test (test_resident.py): `ok TAG` emits TAG, `raise`
raises, `hang` never returns."""
import sys
import time

from common import emit
from world import world

what = sys.argv[1]
if what == "raise":
    raise RuntimeError("the probe raised on purpose")
if what == "hang":
    time.sleep(3600)
emit(world().Get_rank(), tag=sys.argv[2])
