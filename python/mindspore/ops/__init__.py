"""`mindspore.ops`: functional ops, primitive classes and gradients."""
from . import functional
from . import operations
from .functional import *  # noqa: F401,F403
from .functional import sum, abs, pow  # noqa: F401  (names shadowing builtins, kept as MindSpore has them)
from .operations import *  # noqa: F401,F403
from .composite import value_and_grad, grad, GradOperation, clip_by_global_norm

function = functional
