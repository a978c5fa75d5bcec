"""docs/algorithms.md's worked example is a working algorithm: registered as the page says,
it trains through training.learning.train, checkpoints, resumes and plays as an agent."""

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parent.parent

SCRIPT = """
import importlib.util, json, sys
from pathlib import Path
spec = importlib.util.spec_from_file_location("training.algorithms.reinforce", sys.argv[1])
module = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = module
spec.loader.exec_module(module)
import training.algorithms
training.algorithms.MODULES["REINFORCE"] = "training.algorithms.reinforce"  # the registry line
from training.learning import train as train_module
from training.agents import make_agent
from training.learning.config import load_config
from training.common.games import EnvHandle
out = Path(sys.argv[2])
config = load_config("configs/craits_quick.yaml", [
    "algorithm={name: REINFORCE, net_arch: [16], train_every: 16}", "env.args.deals=[3]",
    "training.total_timesteps=512", "vec.n_envs=4", "checkpoints.every=256", "checkpoints.eval_every=100000",
    "checkpoints.eval_games=1", "opponents.self_play.snapshot_every=256", f"output.dir={out}", "output.name=run"])
run = train_module.train(config, config.run_dir)
meta = json.loads((run / "checkpoint" / "meta.json").read_text())
assert meta["algorithm"]["name"] == "REINFORCE" and meta["action_selection"] == "masked_sampling", meta
assert meta["timesteps"] >= 512
train_module.main(["--resume", str(run), "--set", "training.total_timesteps=1024"])
assert json.loads((run / "checkpoint" / "meta.json").read_text())["timesteps"] >= 1024
agent = make_agent(str(run / "checkpoint"), EnvHandle("craits_v0", config.env.args))
print("ok", type(agent).__name__)
"""


def test_the_worked_example_trains_resumes_and_plays(tmp_path):
    page = (ROOT / "docs" / "algorithms.md").read_text()
    code = re.search(r'```python\n(""".*?)```', page, re.S).group(1)
    module = tmp_path / "reinforce.py"
    module.write_text(code)
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(module), str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "ok PolicyAgent" in done.stdout
