"""View patterns of a torch.fx graph that mutwo writes as one op kind (python/mutwo/torch_import.py's
Exporter mixes these in): a run of views and copies has no kind of its own, but the run as a whole
does.

- ViT's patch tokens and class token (reshape, permute, expand, cat): class_token_concat;
- torch.chunk of a feature map's channels: one slice_channels per piece indexed;
- ShuffleNet's channel_shuffle (view [B, g, C/g, H, W], transpose(1, 2), contiguous, view back):
  channel_shuffle.

Each method returns True when it took the node (recording a partial view in self.views, or
writing the op), False to leave it to the exporter's other rules.
"""
import operator

import torch


class ViewPatterns:
    def token_view(self, node):
        """ViT's patch tokens and class token: views folded into class_token_concat. True if handled."""
        t, args = node.target, node.args
        src = args[0] if args else None
        if t == "reshape" and src in self.env and len(self.tensors[self.env[src]]["shape"]) == 4 and \
                len(getattr(node.meta.get("tensor_meta"), "shape", ())) == 3:
            self.views[node] = ("patches", self.env[src])  # [B, C, h, w] -> [B, C, h*w]
        elif t == "permute" and src in self.views and self.views[src][0] == "patches" and \
                [int(a) for a in args[1:]] == [0, 2, 1]:
            self.views[node] = self.views[src]  # -> [B, h*w, C]
        elif t == "expand" and src in self.env and self.tensors[self.env[src]]["role"] == "weight":
            self.views[node] = ("class_token", self.env[src])  # [1, 1, C] -> [B, 1, C]
        elif t in (torch.cat, "cat") and isinstance(src, (list, tuple)) and len(src) == 2 and \
                node.kwargs.get("dim", args[1] if len(args) > 1 else 0) == 1 and \
                self.views.get(src[0], ("",))[0] == "class_token" and self.views.get(src[1], ("",))[0] == "patches":
            self.env[node] = self.out(node)
            self.op(node.name, "class_token_concat", [self.views[src[1]][1], self.views[src[0]][1]], [self.env[node]])
        else:
            return False
        return True

    def channel_view(self, node):
        """torch.chunk of a feature map's channels (each piece is mutwo's slice_channels when indexed)
        and ShuffleNet's channel_shuffle (view [B, g, C/g, H, W], transpose(1, 2), contiguous, view
        back: mutwo's channel_shuffle). True if handled."""
        t, args = node.target, node.args
        src = args[0] if args else None
        shape = lambda n: self.tensors[self.env[n]]["shape"] if n in self.env else None
        out = getattr(node.meta.get("tensor_meta"), "shape", None)
        if t in ("chunk", torch.chunk) and shape(src) is not None and len(shape(src)) == 4 and \
                self.call_args(node, ("input", "chunks", "dim")).get("dim", 0) in (1, -3):
            self.views[node] = ("chunk", self.env[src], int(self.call_args(node, ("input", "chunks"))["chunks"]))
        elif t is operator.getitem and self.views.get(src, ("",))[0] == "chunk" and isinstance(args[1], int):
            _, x, chunks = self.views[src]
            channels = self.tensors[x]["shape"][1]
            size = -(-channels // chunks)  # torch.chunk: ceil(C / chunks) per piece, the last one smaller
            start = args[1] * size
            self.env[node] = self.out(node)
            self.op(node.name, "slice_channels", [x], [self.env[node]],
                    {"start": start, "length": min(size, channels - start)})
        elif t in ("view", "reshape") and shape(src) is not None and len(shape(src)) == 4 and out is not None and \
                len(out) == 5 and out[0] == shape(src)[0] and out[1] * out[2] == shape(src)[1] and \
                list(out[3:]) == shape(src)[2:]:
            self.views[node] = ("groups", self.env[src], int(out[1]))  # [B, g, C/g, H, W]
        elif t in ("transpose", torch.transpose) and self.views.get(src, ("",))[0] == "groups" and \
                sorted(int(a) for a in args[1:3]) == [1, 2]:
            self.views[node] = ("shuffled",) + self.views[src][1:]
        elif t == "contiguous" and self.views.get(src, ("",))[0] == "shuffled":
            self.views[node] = self.views[src]
        elif t in ("view", "reshape") and self.views.get(src, ("",))[0] == "shuffled" and out is not None and \
                list(out) == self.tensors[self.views[src][1]]["shape"]:
            self.env[node] = self.out(node)
            self.op(node.name, "channel_shuffle", [self.views[src][1]], [self.env[node]],
                    {"groups": self.views[src][2]})
        else:
            return False
        return True
