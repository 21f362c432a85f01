#include "DelegateKitFixtures.h"
