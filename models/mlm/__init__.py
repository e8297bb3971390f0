"""The masked language model of Section 5: the model and its pretraining (:mod:`.model`), the
disk cache of pretrained models (:mod:`.cache`), the quality gate against the exact ``G``
(:mod:`.gate`), head, prompt and attention tuning on a frozen model (:mod:`.tuning`), the fair
baselines beside the paper's protocol (:mod:`.fair`) and downstream splits whose validation and
test sequences never occur in training (:mod:`.splits`)."""
