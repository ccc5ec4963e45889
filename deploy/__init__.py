"""Running LayerNorm Lab for a class: several processes behind a load balancer."""
