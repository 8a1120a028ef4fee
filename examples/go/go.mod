module hived.example/capi

go 1.19
