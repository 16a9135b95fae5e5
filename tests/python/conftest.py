import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
# The project's Python packages (acl, hccl, mindspore), as a user puts them on PYTHONPATH.
sys.path.insert(1, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                                "python"))
