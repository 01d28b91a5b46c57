// Internal functions that the tests call directly (the selection rule with fake variants,
// the workspace check) stay visible from libgdn.so even under -fvisibility=hidden.
#pragma once

#define GDN_INTERNAL_API __attribute__((visibility("default")))
